"""Claims of decentralized optimization: rates (being written)."""
