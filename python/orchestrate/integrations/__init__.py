"""Callbacks for training frameworks: `orchestrate.integrations.hf` (transformers' Trainer) and
`orchestrate.integrations.lightning` (Lightning's Trainer). Each imports its framework only when
it is imported itself, and works (on a plain base class) where the framework is not installed."""
