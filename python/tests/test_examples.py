"""Smoke runs of the examples (seconds): every step of each runs once."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


@unittest.skipUnless(HAVE_TORCH, "the examples need PyTorch (apt-get install python3-torch)")
class TestExamples(unittest.TestCase):
    def run_example(self, *args):
        out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr[-3000:])
        return out.stdout

    def test_alphazero_smoke(self):
        with tempfile.TemporaryDirectory() as d:
            out = self.run_example(os.path.join(EXAMPLES, "alphazero.py"), "--smoke", "--out", d)
            self.assertIn("iter 2:", out)
            self.assertIn("vs onestep: win", out)
            self.assertTrue(os.path.exists(os.path.join(d, "net.safetensors")))

    def test_ppo_smoke(self):
        out = self.run_example(os.path.join(EXAMPLES, "ppo.py"), "--smoke")
        self.assertIn("update 2:", out)


if __name__ == "__main__":
    unittest.main()
