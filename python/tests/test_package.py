"""The package itself: its types are what the generator makes of the committed openapi.json, every
operation has a method, it runs on the standard library alone, and it installs offline with pip."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import typing
import unittest
from pathlib import Path

import updown
from updown import types as T
from updown.client import OPERATION_METHODS, Client

HERE = Path(__file__).resolve().parents[1]
GENERATOR = HERE / "tools" / "generate_types.py"


class PackageTest(unittest.TestCase):
    def test_types_are_byte_for_byte_what_the_generator_makes_of_openapi_json(self) -> None:
        fresh = subprocess.run([sys.executable, str(GENERATOR), "--stdout"], capture_output=True, check=True).stdout
        self.assertIn(b'"listSnapshots": ("GET", "/v1/markets/{slug}/snapshots")', fresh)
        committed = (HERE / "updown" / "types.py").read_bytes()
        self.assertTrue(fresh == committed, "python/updown/types.py is stale: run python3 python/tools/generate_types.py")
        self.assertEqual(subprocess.run([sys.executable, str(GENERATOR), "--check"]).returncode, 0)

    def test_every_operation_has_a_method(self) -> None:
        self.assertEqual(set(OPERATION_METHODS), set(T.OPERATIONS))
        for operation, method in OPERATION_METHODS.items():
            self.assertTrue(callable(getattr(Client, method, None)), method)
            self.assertIn(f'"{operation}"', Path(updown.client.__file__).read_text(), operation)

    def test_every_type_resolves(self) -> None:
        names = [n for n in dir(T) if isinstance(getattr(T, n), type) and n[0].isupper()]
        self.assertGreater(len(names), 60)
        for name in names:
            typing.get_type_hints(getattr(T, name))
        self.assertIn("orderbook_up", typing.get_type_hints(T.Snapshot))

    def test_standard_library_only_and_no_syntax_beyond_python_3_9(self) -> None:
        allowed = set(sys.stdlib_module_names) | {"updown", "pandas", "numpy"}
        for path in sorted((HERE / "updown").glob("*.py")):
            tree = ast.parse(path.read_text(), feature_version=(3, 9))
            self.assertIn("from __future__ import annotations", path.read_text(), path.name)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    roots = [a.name.split(".")[0] for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    roots = [(node.module or "").split(".")[0]]
                else:
                    continue
                for root in roots:
                    self.assertIn(root, allowed, f"{path.name} imports {root}")
        code = "import sys, updown; c = updown.Client(api_key='k'); assert 'pandas' not in sys.modules, 'pandas at import'"
        subprocess.run([sys.executable, "-c", code], check=True, cwd=HERE)

    def test_the_key_and_address_come_from_the_environment(self) -> None:
        env = dict(os.environ, UPDOWN_API_KEY="ud_from_env", UPDOWN_BASE_URL="http://example.test:9/")
        code = "import updown; c = updown.Client(); print(c.api_key, c.base_url)"
        out = subprocess.run([sys.executable, "-c", code], check=True, cwd=HERE, env=env, capture_output=True, text=True)
        self.assertEqual(out.stdout.split(), ["ud_from_env", "http://example.test:9"])

    def test_pip_installs_it_offline_into_a_venv(self) -> None:
        with tempfile.TemporaryDirectory() as work:
            source = Path(work) / "src"
            # A copy: pip builds in the source tree and would leave build/ and *.egg-info in python/.
            shutil.copytree(HERE, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
            venv = Path(work) / "venv"
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
            python = venv / "bin" / "python"
            install = [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation", "--quiet", str(source)]
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            done = subprocess.run(install, capture_output=True, text=True, env=env)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            probe = "import updown, updown.types; print(updown.__file__); print(updown.__version__)"
            out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=env, cwd=work, check=True)
            where, version = out.stdout.split()
            self.assertTrue(where.startswith(str(venv)), where)
            self.assertEqual(version, updown.__version__)
            self.assertTrue(Path(where).with_name("py.typed").exists())
