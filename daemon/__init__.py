"""dreamd: daemon package."""
