"""Measure names and metric parameters that cannot be used end in a library error
(maxent.metrics): a MeasureNameError that suggests a name, or a ParameterError.
"""
from __future__ import annotations

import pytest

from maxent import MeasureNameError, ParameterError, parse_measure


def test_measure_and_parameter_errors():
    with pytest.raises(MeasureNameError, match="did you mean"):
        parse_measure("nDGC@10")
    with pytest.raises(MeasureNameError):
        parse_measure("P@0")  # a ParameterError inside a name is reported as a name error
    from maxent.metrics import Precision
    with pytest.raises(ParameterError):
        Precision(cutoff=0)
