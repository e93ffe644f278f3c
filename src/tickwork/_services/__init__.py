"""Services: each concept's operations over the runtime and the store."""
