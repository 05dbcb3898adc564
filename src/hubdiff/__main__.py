import sys

from ._entry import run

sys.exit(run())
