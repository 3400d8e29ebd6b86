"""The perfect-play oracle (treelab.oracle): solving, judging one move, the oracle in the views."""
