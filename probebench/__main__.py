from probebench.cli import main

raise SystemExit(main())
