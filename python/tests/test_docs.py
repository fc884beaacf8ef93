"""The README's examples run as written, and the worked example runs to the end on the demo data."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def readme_examples() -> list:
    return re.findall(r"^```python\n(.*?)^```", (HERE / "README.md").read_text(), re.S | re.M)


class DocsTest(unittest.TestCase):
    def run_python(self, args: list, cwd: str):
        env = dict(os.environ, PYTHONPATH=str(HERE))
        return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)

    def test_every_readme_example_runs(self) -> None:
        examples = readme_examples()
        self.assertGreaterEqual(len(examples), 5)
        for number, code in enumerate(examples, 1):
            with self.subTest(example=number), tempfile.TemporaryDirectory() as work:
                done = self.run_python(["-c", code], work)
                self.assertEqual(done.returncode, 0, f"example {number}:\n{code}\n{done.stdout}\n{done.stderr}")
                self.assertTrue(done.stdout.strip(), f"example {number} printed nothing")

    def test_the_worked_example_runs_to_the_end(self) -> None:
        with tempfile.TemporaryDirectory() as work:
            plot = Path(work) / "up.png"
            script = HERE / "examples" / "week_of_btc_15m.py"
            done = self.run_python([str(script), "--days", "7", "--cache", str(Path(work) / "cache"), "--plot", str(plot)], work)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertRegex(done.stdout, r"^\d+ snapshots of \d+ markets", done.stdout)
            self.assertIn("Up won", done.stdout)
            self.assertIn("done at", done.stdout)
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self.assertIn("matplotlib is not installed", done.stderr)
            else:
                self.assertTrue(plot.exists())
