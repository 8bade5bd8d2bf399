; Fold declaration bodies and nested blocks.
(block) @fold
