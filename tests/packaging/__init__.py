"""What ships: the wheel installed alone, and the optional extras."""
