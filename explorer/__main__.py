"""python -m explorer"""

import sys

from explorer.cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
