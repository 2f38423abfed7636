#!/usr/bin/env python
"""Django's command-line entry point for AgeVerify."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ageverify.settings")
    from django.core.management import execute_from_command_line

    from ageverify.env import ConfigurationError

    try:
        execute_from_command_line(sys.argv)
    except ConfigurationError as error:  # a variable of the environment is wrong: say which, without a traceback
        sys.exit(f"Configuration error: {error}")


if __name__ == "__main__":
    main()
