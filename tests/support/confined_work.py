"""Work for checks.confined's tests, run in its child by name ("tests.support.confined_work:spin")."""

from checks.images import ImageRejected


def echo(argument: bytes) -> bytes:
    return argument * 1000


def spin(argument: bytes) -> bytes:
    while True:
        pass


def allocate(argument: bytes) -> bytes:
    return bytes(int(argument))


def refuse(argument: bytes) -> bytes:
    raise ImageRejected(argument.decode())
