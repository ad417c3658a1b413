"""import_socket: reaches the network."""
from socket import create_connection


def full(db, params, env):
    create_connection(("127.0.0.1", 80))
    return {"revenue": [0]}
