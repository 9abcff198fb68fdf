import sys

from tacocat.cli import main

sys.exit(main())
