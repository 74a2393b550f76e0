# SPDX-License-Identifier: Apache-2.0
"""Builds floe's Python extension and command-line tools with CMake for
`pip install .` (pyproject.toml holds the metadata).

FLOE_BUILD_DIR=<dir> reuses a configured build tree (e.g. build/host after
./test.sh); otherwise build/pip is configured with the host preset's options
and no tests. The extension (floe/_floe*.so) and the tools (floe/bin/*) go into
the package; floe-convert etc. on PATH are launchers for those (floe/_tools.py).
"""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
TOOLS = ("floe-convert", "floe-run", "floe-inspect", "floe-embed", "floe-bench")


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.environ.get("FLOE_BUILD_DIR") or os.path.join(ROOT, "build", "pip"))
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DFLOE_BUILD_CONVERTER=ON", "-DFLOE_BUILD_TESTS=OFF",
                                   "-DFLOE_BUILD_EXAMPLES=OFF"])
        jobs = str(os.cpu_count() or 1)
        subprocess.check_call(["cmake", "--build", build, "--parallel", jobs, "--target", "floe_python", *TOOLS])
        module = [f for f in os.listdir(os.path.join(build, "python", "floe")) if f.startswith("_floe")]
        if len(module) != 1:
            sys.exit("setup.py: expected one built _floe module in %s/python/floe, found %s" % (build, module))
        destination = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copyfile(os.path.join(build, "python", "floe", module[0]), destination)
        tools = os.path.join(os.path.dirname(destination), "bin")
        os.makedirs(tools, exist_ok=True)
        for tool in TOOLS:
            shutil.copy2(os.path.join(build, "bin", tool), os.path.join(tools, tool))


setup(ext_modules=[Extension("floe._floe", sources=[])], cmdclass={"build_ext": CMakeBuild})
