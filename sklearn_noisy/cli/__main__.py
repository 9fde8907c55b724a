"""``python -m sklearn_noisy.cli``: the ``sklearn-noisy`` command line."""

import sys

from ._main import main

sys.exit(main())
