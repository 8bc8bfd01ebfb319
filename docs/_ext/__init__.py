"""The site's Sphinx extensions (docs/conf.py loads them as the package
``site_ext``): each module does one thing and has its own ``setup(app)``;
``pages`` holds what several of them share (which pages the site has, and
what it computes from a page's text)."""
