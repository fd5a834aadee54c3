"""The data the experiments run over, generated in Spark (deterministic for a seed).

================  ===============================================================
``views``         seed 000's ``View(view_id, user_id, tweet_id)``: uniform or Zipf over tweets
``wordcount``     FLIP-140's WordCount input and FLIP-325's count-job input
``lifecycle``     per user ``created`` then ``deleted``: the salting lesson's order example
================  ===============================================================

Example::

    >>> from skewlab.inputs import ViewSpec
    >>> ViewSpec(n_views=100_000, n_users=25_000, n_tweets=20).name
    'v100000-u25000-t20-uniform-seed0'
"""

from __future__ import annotations

from skewlab.inputs.lifecycle import lifecycle_events
from skewlab.inputs.views import (
    ViewSpec,
    check_view_keys,
    check_views_schema,
    generate_views,
    key_load,
    load_summary,
    load_views,
    save_views,
)
from skewlab.inputs.wordcount import flip325_input, flip325_key, wordcount_input

__all__ = [
    "ViewSpec",
    "check_view_keys",
    "check_views_schema",
    "flip325_input",
    "flip325_key",
    "generate_views",
    "key_load",
    "lifecycle_events",
    "load_summary",
    "load_views",
    "save_views",
    "wordcount_input",
]
