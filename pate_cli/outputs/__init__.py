"""REPORT + PLOT: results -> bytes (summaries, tables, figures); nothing here computes privacy."""
