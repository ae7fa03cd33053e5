"""``python -m vyre_vk ...`` is the ``vyre-vk`` command (for environments without the script)."""
import sys

from vyre_vk.cli import main

sys.exit(main())
