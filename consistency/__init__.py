"""dreamd: consistency package."""
