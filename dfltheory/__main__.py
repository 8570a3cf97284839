from dfltheory.cli import main

raise SystemExit(main())
