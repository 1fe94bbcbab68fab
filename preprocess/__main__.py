import sys

from preprocess.cli import main

sys.exit(main())
