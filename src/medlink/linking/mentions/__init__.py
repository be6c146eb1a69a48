"""What happens to a mention before and around the sieves: short forms spelled out, respellings, composite
splitting, number agreement, non-terms, branch scopes, the term test, and finding concept mentions in running text."""
