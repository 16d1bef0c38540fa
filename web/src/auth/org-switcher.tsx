/** The header's organization and workspace switcher (filled in by the auth pages' work). */
export function OrgSwitcher() {
  return null;
}
