; Declarations define names; identifiers in values refer to them.
(source_file) @local.scope
(declaration name: (identifier) @local.definition)
(identifier) @local.reference
