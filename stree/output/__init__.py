"""Rendering, human and machine: the graph, output modes, progress, dates, record fields."""
