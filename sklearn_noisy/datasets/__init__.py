"""Small embedded datasets with known label measurement error.

All are simulated from documented generating models with fixed seeds (see
``DESCR`` and ``sklearn_noisy/datasets/_make_data.py``): no open real data with
repeated label measurements could be shipped.
"""

from ._base import load_noisy_diagnosis, load_oxygen_sensor, load_wheat_protein

__all__ = ["load_noisy_diagnosis", "load_oxygen_sensor", "load_wheat_protein"]
