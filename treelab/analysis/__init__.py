"""treelab.analysis."""
