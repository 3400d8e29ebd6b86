"""Measures of a tree (treelab.analysis): arrays, statistics, growth, shape, diffs, mistake rates."""
