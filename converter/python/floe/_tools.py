# SPDX-License-Identifier: Apache-2.0
"""The command-line tools a `pip install` puts on PATH: each runs the binary of
its name that setup.py placed in floe/bin, with the same arguments."""

import os
import sys


def main():
    tool = os.path.basename(sys.argv[0])
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", tool)
    if not os.path.isfile(binary):
        sys.exit("floe: %s is not part of this installation (%s missing)" % (tool, binary))
    os.execv(binary, [binary] + sys.argv[1:])
