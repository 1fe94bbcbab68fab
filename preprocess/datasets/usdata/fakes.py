"""USData: no demo copy of its download, a Google Drive archive whose layout below its organ folders is not
published (sources.yaml); the demo declares its subset left out (DEMO_LEFT_OUT), and preprocess/demo/folders.py
finds the declaration."""

# The subsets the demo leaves unbuilt on purpose, with the reason a build gives: it writes no raw files for them
# and ships no task files, so that its status, plan and report show not-built rows.
DEMO_LEFT_OUT = {
    "2D_Task/USData": "raw missing",
}
