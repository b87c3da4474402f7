"""Hostile conditions around the commands: outputs that cannot be written as asked,
signals arriving mid-run."""
