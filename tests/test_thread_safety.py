"""No library call changes the process's warning filters.

:func:`warnings.catch_warnings` swaps the filter list of every thread at once:
a library that uses it silences (or loses) the warnings other threads raise
meanwhile, and two threads that interleave can leave its filters behind for
good. The package raises its own warnings through
:func:`sklearn_noisy.utils._warnings.warn`, which :func:`~._warnings.quiet`
turns off in one thread only.
"""

from __future__ import annotations

import pathlib
import re
import threading
import warnings

import numpy as np
import pytest

import sklearn_noisy
from sklearn_noisy.metrics import expected_f1_score, expected_r2_score
from sklearn_noisy.utils._warnings import quiet, warn

PACKAGE = pathlib.Path(sklearn_noisy.__file__).parent

#: Calls that change the process's warning filters.
_FILTER_CALLS = re.compile(
    r"\b(catch_warnings|simplefilter|filterwarnings|resetwarnings)\s*\("
)


class _OtherThreadWarning(UserWarning):
    pass


def test_package_never_changes_warning_filters():
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if _FILTER_CALLS.search(line)
    ]
    assert found == []


def test_quiet_is_local_to_its_thread():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet():
            warn("left out")
            worker = threading.Thread(target=warn, args=("shown",))
            worker.start()
            worker.join()
        warn("shown again")
    assert [str(w.message) for w in caught] == ["shown", "shown again"]
    assert caught[1].filename == __file__  # the caller's line


def test_bootstrap_in_threads_keeps_warning_filters_and_other_warnings():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    y_pred = np.where(rng.random(60) < 0.8, y, 1 - y)
    expected = expected_f1_score(y, y_pred, q=0.1, test_set_sampling="bootstrap")
    assert expected.sampling_method == "bootstrap"
    n_raised = 0
    stop = threading.Event()

    def other_thread() -> None:
        nonlocal n_raised
        while not stop.is_set() or n_raised < 100:
            warnings.warn(f"own {n_raised}", _OtherThreadWarning, stacklevel=1)
            n_raised += 1

    results = []

    def library_thread() -> None:
        results.append(
            expected_f1_score(y, y_pred, q=0.1, test_set_sampling="bootstrap")
        )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        filters = list(warnings.filters)
        warner = threading.Thread(target=other_thread)
        workers = [threading.Thread(target=library_thread) for _ in range(4)]
        warner.start()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        stop.set()
        warner.join()
        assert warnings.filters == filters
    own = [w for w in caught if issubclass(w.category, _OtherThreadWarning)]
    assert len(own) == n_raised
    assert results == [expected] * 4


def test_resamples_do_not_repeat_the_warning_of_the_call():
    # R² of 5 noisy labels warns once (its variance is infinite); the
    # bootstrap's 200 resamples stay quiet, and no filter is left behind.
    y = np.array([3.0, -0.5, 2.0, 7.0, 4.2])
    y_pred = np.array([2.5, 0.0, 2.0, 8.0, 4.0])
    filters = list(warnings.filters)
    with pytest.warns(UserWarning) as record:
        expected_r2_score(y, y_pred, sigma=0.5, test_set_sampling="bootstrap")
    assert len(record) == 1
    assert warnings.filters == filters
