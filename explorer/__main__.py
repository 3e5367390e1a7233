"""python -m explorer"""

import sys

from explorer.cli import main

if __name__ == "__main__":
    sys.exit(main())
