import sys

from flydsl_ls.cli import main

sys.exit(main())
