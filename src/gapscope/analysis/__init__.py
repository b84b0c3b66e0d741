"""Inspect logs -> tidy tables. The logs are the only results format; this reads them."""
