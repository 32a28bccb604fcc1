"""Whether a learner's function can take the arguments a checker calls it with.

A TypeError from the call may come from the signature (a parameter missing or misnamed) or from a line inside a
function whose signature is right (`keep_dim=True` for `keepdim=True`). Only the first is the signature's fault, so a
checker says "give the function the parameters ..." only when `refuses` is True, and reports the error itself otherwise.
"""

from __future__ import annotations

import inspect

__all__: list[str] = []


def refuses(error: object, function: object, *args: object, **kwargs: object) -> bool:
    """Whether `error`, raised by calling `function(*args, **kwargs)`, is a TypeError of the signature: `function`
    cannot bind `args` and `kwargs` (False when it can, when its signature cannot be read, or for any other error)."""
    if not isinstance(error, TypeError):
        return False
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return True
    except ValueError:  # no signature to read: the error the call raised is reported as it is
        return False
    return False
