import sys

from ascjax._src.cli import main

sys.exit(main())
