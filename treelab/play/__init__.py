"""treelab.play."""
