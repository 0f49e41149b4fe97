"""The JSON frontend (--output json|stream-json): the plain driver, events as JSON lines."""
