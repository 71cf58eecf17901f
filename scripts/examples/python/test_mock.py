"""An SDK's tests in another language, against the mock started with npx (Python standard library only).

Run from a project where the package is installed (`npm install ai-employee-mock`):

    python3 -m unittest discover -s <this folder> -v

MOCK_COMMAND overrides the start command (default: `npx ai-employee-mock`). The mock is started once on a free
port with a manual virtual clock and reset before each test, so every test starts from the same world, the
same time and the same ids.
"""

import json
import os
import re
import shlex
import subprocess
import unittest
import urllib.error
import urllib.request

KEY = "sk_test_a_full"  # the default fixture world's key with every scope
DEPLOYMENT = "aaaaaaaa-d000-4000-8000-000000000001"


class MockTestCase(unittest.TestCase):
    mock = None
    base_url = None

    @classmethod
    def setUpClass(cls):
        command = shlex.split(os.environ.get("MOCK_COMMAND", "npx ai-employee-mock"))
        cls.mock = subprocess.Popen(
            command + ["--port", "0", "--clock", "manual", "--quiet"],
            stdout=subprocess.PIPE,
            text=True,
        )
        # The mock prints `listening on http://127.0.0.1:<port>` once it accepts requests.
        for line in cls.mock.stdout:
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                cls.base_url = match.group(1)
                break
        if cls.base_url is None:
            cls.mock.kill()
            raise RuntimeError("the mock exited before it was listening")

    @classmethod
    def tearDownClass(cls):
        # The started process is the server (npx hands the signal on): SIGTERM closes it.
        cls.mock.terminate()
        cls.mock.wait(timeout=30)
        cls.mock.stdout.close()

    def setUp(self):
        self.control("POST", "/_mock/reset", {})

    def request(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                return res.status, json.loads(res.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def api(self, method, path, body=None, headers=None):
        return self.request(method, path, body, {"Authorization": f"Bearer {KEY}", **(headers or {})})

    def control(self, method, path, body=None):
        status, answer = self.request(method, path, body)
        self.assertLess(status, 300, answer)
        return answer

    def start_turn(self, text, idempotency_key):
        status, receipt = self.api(
            "POST",
            f"/v1/deployments/{DEPLOYMENT}/sessions",
            {"input": [{"type": "TEXT", "text": text}]},
            {"Idempotency-Key": idempotency_key},
        )
        self.assertEqual(status, 202, receipt)
        return receipt


class TurnTests(MockTestCase):
    def test_turn_succeeds_after_the_clock_moves(self):
        receipt = self.start_turn("Summarise the quarterly report", "py-1")
        self.assertEqual(receipt["status"], "QUEUED")
        self.control("POST", "/_mock/clock/advance", {"seconds": 5})
        status, turn = self.api("GET", f"/v1/sessions/{receipt['session_id']}/turns/{receipt['turn_id']}")
        self.assertEqual(status, 200)
        self.assertEqual(turn["status"], "SUCCEEDED")

    def test_queued_scenario_fails_the_next_turn(self):
        self.control("POST", "/_mock/scenarios", {"target_id": DEPLOYMENT, "scenario": "fail"})
        receipt = self.start_turn("This one fails", "py-2")
        self.control("POST", "/_mock/clock/advance", {"seconds": 5})
        _, turn = self.api("GET", f"/v1/sessions/{receipt['session_id']}/turns/{receipt['turn_id']}")
        self.assertEqual(turn["status"], "FAILED")
        self.assertEqual(turn["error"]["code"], "EXECUTION_FAILED")

    def test_same_key_and_body_gives_the_same_receipt(self):
        first = self.start_turn("Once", "py-3")
        self.assertEqual(self.start_turn("Once", "py-3"), first)


if __name__ == "__main__":
    unittest.main()
