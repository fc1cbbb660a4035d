"""What the oracle suites need, and what it means when it is missing. A missing oracle must never
read as a pass: numpy is always required (tools/deps.sh installs python3-numpy), so without it
every numpy oracle test fails; PyTorch is optional, and without it every torch oracle test fails
too, unless PIJIT_ALLOW_NO_TORCH=1 says this machine runs without it (tools/run_tests.sh sets it
only where python3-torch is not installed, and says the torch suites are skipped). Call from setUp."""
import os


def require_numpy(case, np):
    if np is None:
        case.fail("numpy is not installed for this Python: the numpy oracle needs it "
                  "(Debian: python3-numpy, which tools/deps.sh installs)")


def require_torch(case, torch):
    if torch is not None:
        return
    if os.environ.get("PIJIT_ALLOW_NO_TORCH") == "1":
        case.skipTest("PyTorch is not installed for this Python (PIJIT_ALLOW_NO_TORCH=1): torch oracle skipped")
    case.fail("PyTorch is not installed for this Python: install python3-torch, or set "
              "PIJIT_ALLOW_NO_TORCH=1 to run without the torch oracle suites")
