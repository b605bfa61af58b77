from scrub_helpers import block, make_issue

from issuetriage.evidence.repro import free_names, pick_repro
from issuetriage.scrub.model import ReproSource, Stop

OLD = "import math\nprint(math.sqrt(-1))\n"
NEW = "import math\nx = -1\nprint(math.sqrt(x))\nprint('done')\n"


def test_takes_newest_runnable_block_of_the_original_poster():
    issue = make_issue(block(OLD) + block("Traceback (most recent call last):\nValueError: x", "")
                       + block("pip install foo", "bash"), comments=(("op", block(NEW)),))
    picked = pick_repro(issue)
    assert isinstance(picked, ReproSource)
    assert picked.where == "comment 1" and picked.author == "op" and "x = -1" in picked.code


def test_prefers_strictly_shorter_self_contained_block_from_a_commenter():
    short = "import math\nmath.sqrt(-1)\n"
    picked = pick_repro(make_issue(block(NEW), comments=(("helper", block(short)),)))
    assert isinstance(picked, ReproSource)
    assert picked.author == "helper" and "shorter" in picked.reason


def test_ignores_commenter_block_that_is_not_self_contained():
    partial = "math.sqrt(y)\n"
    picked = pick_repro(make_issue(block(NEW), comments=(("helper", block(partial)),)))
    assert isinstance(picked, ReproSource) and picked.author == "op"


def test_console_session_becomes_plain_code():
    picked = pick_repro(make_issue(block(">>> import math\n>>> math.sqrt(-1)\nTraceback...", "pycon")))
    assert isinstance(picked, ReproSource) and picked.code.startswith("import math")


def test_code_only_in_a_screenshot_stops():
    stop = pick_repro(make_issue("It crashes, see ![shot](https://example.invalid/a.png)"))
    assert isinstance(stop, Stop) and "screenshot" in stop.reason


def test_no_code_stops_with_needs_reproduction():
    stop = pick_repro(make_issue("It crashes sometimes."))
    assert isinstance(stop, Stop) and stop.label == "needs reproduction"


def test_free_names():
    assert free_names("import os\nprint(os.sep, undefined_thing)") == {"undefined_thing"}
