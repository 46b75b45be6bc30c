"""Pictures of instructions (matplotlib), above the instruction set."""
