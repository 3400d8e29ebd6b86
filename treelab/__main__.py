"""``python -m treelab``: the command line."""

from .cli import main

main()
