"""The local app: the chat page and the API it draws from."""
