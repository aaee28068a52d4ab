"""Entry points for frameworks (LangChain, LlamaIndex, ...): each module imports its real framework
and is an optional extra; the core never imports anything here."""
