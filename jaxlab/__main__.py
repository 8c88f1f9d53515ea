from jaxlab.cli import main

raise SystemExit(main())
