"""The edge: what the entry points (Engine, Client) share or hand work to."""
