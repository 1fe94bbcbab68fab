"""The dataset folders (README.md): each one's registry entries as YAML and its fakes as fakes.py."""
