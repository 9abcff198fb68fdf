"""``python -m tacocat.worker``: one RQ worker process (``tacocat worker`` starts these)."""

import sys

from .rqworker import main

sys.exit(main())
